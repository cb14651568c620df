
BprobabilitiesJ(Åxž=¡Ë=f&	>þÜÌ=D%¨=SZü=Ú1³=L€Á=çÇ=4ÿÖ=